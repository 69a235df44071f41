package webhook

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"net"
	"net/url"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	admissionac "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
	networkingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/networking/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// ConfigurationName is the name of the ValidatingWebhookConfiguration.
const ConfigurationName = "flotilla-validating"

// FieldManager is the server-side apply field manager of Install.
const FieldManager = "flotilla-controlplane"

// Config says how the host apiserver reaches the webhook.
type Config struct {
	// URL is the webhook server's base address, https://host:port; each
	// kind's path is appended to it.
	URL string
	// CABundle is the PEM bundle the host trusts the serving certificate with.
	CABundle []byte
	// FailurePolicy is what the host does when the webhook cannot be reached.
	// Fail (the default, as Karmada's) refuses writes of Clusters and
	// policies while no control plane process serves the webhook.
	FailurePolicy admissionregistrationv1.FailurePolicyType
}

type hook struct {
	name, path, group, resource string
	scope                       admissionregistrationv1.ScopeType
}

// hooks are the webhooks of Configuration, in the API groups this process
// serves (the API packages' GroupVersion, chosen by apis.Use at start).
func hooks() []hook {
	return []hook{
		{"cluster", PathCluster, clusterv1.GroupVersion.Group, "clusters", admissionregistrationv1.ClusterScope},
		{"propagationpolicy", PathPropagationPolicy, policyv1.GroupVersion.Group, "propagationpolicies", admissionregistrationv1.NamespacedScope},
		{"clusterpropagationpolicy", PathClusterPropagationPolicy, policyv1.GroupVersion.Group, "clusterpropagationpolicies", admissionregistrationv1.ClusterScope},
		{"overridepolicy", PathOverridePolicy, policyv1.GroupVersion.Group, "overridepolicies", admissionregistrationv1.NamespacedScope},
		{"clusteroverridepolicy", PathClusterOverridePolicy, policyv1.GroupVersion.Group, "clusteroverridepolicies", admissionregistrationv1.ClusterScope},
		{"federatedresourcequota", PathFederatedResourceQuota, policyv1.GroupVersion.Group, "federatedresourcequotas", admissionregistrationv1.NamespacedScope},
		{"federatedhpa", PathFederatedHPA, autoscalingv1.GroupVersion.Group, "federatedhpas", admissionregistrationv1.NamespacedScope},
		{"cronfederatedhpa", PathCronFederatedHPA, autoscalingv1.GroupVersion.Group, "cronfederatedhpas", admissionregistrationv1.NamespacedScope},
		{"multiclusterservice", PathMultiClusterService, networkingv1.GroupVersion.Group, "multiclusterservices", admissionregistrationv1.NamespacedScope},
		{"resourceinterpretercustomization", PathResourceInterpreterCustomization, configv1.GroupVersion.Group, "resourceinterpretercustomizations", admissionregistrationv1.ClusterScope},
		{"resourcebinding", PathResourceBinding, workv1.GroupVersion.Group, "resourcebindings", admissionregistrationv1.NamespacedScope},
		{"clusterresourcebinding", PathClusterResourceBinding, workv1.GroupVersion.Group, "clusterresourcebindings", admissionregistrationv1.ClusterScope},
		{"work", PathWork, workv1.GroupVersion.Group, "works", admissionregistrationv1.NamespacedScope},
	}
}

// Install server-side applies the ValidatingWebhookConfiguration that sends
// creates and updates of Clusters and policies to the webhook at cfg.URL.
// Applying again with the same configuration writes nothing.
func Install(ctx context.Context, c client.Client, cfg Config) error {
	vwc, err := Configuration(cfg)
	if err != nil {
		return err
	}
	if err := c.Apply(ctx, vwc, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply validating webhook configuration %s: %w", ConfigurationName, err)
	}
	return nil
}

// Configuration is the ValidatingWebhookConfiguration Install applies; the
// Helm chart's, which reaches the webhook through a Service, is checked
// against it.
func Configuration(cfg Config) (*admissionac.ValidatingWebhookConfigurationApplyConfiguration, error) {
	base, err := url.Parse(cfg.URL)
	if err != nil || base.Scheme != "https" || base.Host == "" {
		return nil, fmt.Errorf("webhook url %q: must be an absolute https URL", cfg.URL)
	}
	if len(cfg.CABundle) == 0 {
		return nil, fmt.Errorf("webhook ca bundle: must not be empty")
	}
	failure := cfg.FailurePolicy
	if failure == "" {
		failure = admissionregistrationv1.Fail
	}
	vwc := admissionac.ValidatingWebhookConfiguration(ConfigurationName)
	for _, h := range hooks() {
		u := strings.TrimSuffix(cfg.URL, "/") + h.path
		vwc.WithWebhooks(admissionac.ValidatingWebhook().
			WithName(h.name + ".flotilla.io").
			WithClientConfig(admissionac.WebhookClientConfig().WithURL(u).WithCABundle(cfg.CABundle...)).
			WithRules(admissionac.RuleWithOperations().
				WithOperations(admissionregistrationv1.Create, admissionregistrationv1.Update).
				WithAPIGroups(h.group).WithAPIVersions("*").WithResources(h.resource).WithScope(h.scope)).
			WithFailurePolicy(failure).
			WithMatchPolicy(admissionregistrationv1.Equivalent).
			WithSideEffects(admissionregistrationv1.SideEffectClassNone).
			WithAdmissionReviewVersions("v1").
			WithTimeoutSeconds(10))
	}
	return vwc, nil
}

// ServingCertificate makes a self-signed serving certificate for the
// host or IP of a webhook URL and returns it with the PEM CA bundle that
// trusts it. A process generates a fresh one at start, so no key is ever
// written to disk.
func ServingCertificate(webhookURL string) (tls.Certificate, []byte, error) {
	u, err := url.Parse(webhookURL)
	if err != nil || u.Hostname() == "" {
		return tls.Certificate{}, nil, fmt.Errorf("webhook url %q: no host", webhookURL)
	}
	host := u.Hostname()
	var ips []net.IP
	var names []string
	if ip := net.ParseIP(host); ip != nil {
		ips = append(ips, ip)
	} else {
		names = append(names, host)
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, ips, names)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("generate webhook serving certificate for %s: %w", host, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("load webhook serving certificate: %w", err)
	}
	// The generated chain is the serving certificate followed by the CA
	// that signed it; the CA is what the host must trust.
	var ca []byte
	rest := certPEM
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		ca = pem.EncodeToMemory(block)
	}
	return cert, ca, nil
}
