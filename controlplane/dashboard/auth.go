package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"

	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// EntryPath is the non-resource URL a user must be allowed to GET to open
// the dashboard at all, as /metrics is for the metrics endpoint. A
// ClusterRole grants it with nonResourceURLs: ["/dashboard"].
const EntryPath = "/dashboard"

// Cache lifetimes of the host's answers. An allowed or denied access is
// remembered this long per user and attribute set, so a page of many
// namespaces asks the host once per namespace and user, and a change of
// RBAC shows within these periods.
const (
	authnCacheTTL = time.Minute
	allowCacheTTL = 10 * time.Second
	denyCacheTTL  = 10 * time.Second
)

// access answers who a request is and what that user may read, by asking
// the host apiserver.
type access struct {
	authn authenticator.Request
	authz authorizer.Authorizer
}

// backoff is the retry of TokenReviews and SubjectAccessReviews that
// controller-runtime's metrics filter and k8s.io/apiserver use.
func backoff() *wait.Backoff {
	return &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
}

// newAccess builds the delegating authenticator (bearer tokens checked by
// TokenReview; anonymous refused) and authorizer (SubjectAccessReview) of
// the host that cfg reaches: the same k8s.io/apiserver factories and
// settings as controller-runtime's filters.WithAuthenticationAndAuthorization,
// with shorter authorization caches so RBAC changes show soon.
func newAccess(cfg *rest.Config, httpClient *http.Client) (*access, error) {
	if httpClient == nil {
		c, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return nil, fmt.Errorf("dashboard: host client: %w", err)
		}
		httpClient = c
	}
	authnClient, err := authenticationv1.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("dashboard: tokenreview client: %w", err)
	}
	authzClient, err := authorizationv1.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("dashboard: subjectaccessreview client: %w", err)
	}
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: false},
		CacheTTL:                 authnCacheTTL,
		TokenAccessReviewClient:  authnClient,
		TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff:      backoff(),
	}.New()
	if err != nil {
		return nil, fmt.Errorf("dashboard: authenticator: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: authzClient,
		AllowCacheTTL:             allowCacheTTL,
		DenyCacheTTL:              denyCacheTTL,
		WebhookRetryBackoff:       backoff(),
	}.New()
	if err != nil {
		return nil, fmt.Errorf("dashboard: authorizer: %w", err)
	}
	return &access{authn: authn, authz: authz}, nil
}

type userKey struct{}

// userOf is the authenticated user of a request that went through gate.
func userOf(ctx context.Context) user.Info {
	u, _ := ctx.Value(userKey{}).(user.Info)
	return u
}

// gate lets a request through only with a bearer token the host
// authenticates whose user may GET EntryPath; the user rides in the
// request's context for the per-resource checks of the page. Refusals say
// nothing of the data and the token is never logged.
func (a *access) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok, err := a.authn.AuthenticateRequest(r)
		if err != nil || !ok {
			// An unknown token is an error of the TokenReview webhook; either
			// way the caller is not authenticated.
			http.Error(w, "Unauthorized: send a bearer token the host apiserver accepts", http.StatusUnauthorized)
			return
		}
		decision, _, err := a.authz.Authorize(r.Context(), authorizer.AttributesRecord{
			User: res.User, Verb: "get", Path: EntryPath,
		})
		if err != nil {
			http.Error(w, "the host apiserver did not answer the access review", http.StatusServiceUnavailable)
			return
		}
		if decision != authorizer.DecisionAllow {
			http.Error(w, fmt.Sprintf("Forbidden: user %q may not get %s", res.User.GetName(), EntryPath), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, res.User)))
	})
}

// kind names a kind of the host by its API group and plural name.
type kind struct{ group, name string }

// clustersResource and bindingsResource are read in the API groups this
// process serves (apis.Use chooses them at start).
func clustersResource() kind { return kind{clusterv1.GroupVersion.Group, "clusters"} }

func bindingsResource() kind { return kind{workv1.GroupVersion.Group, "resourcebindings"} }

// eventsResource is the core group's Events, which `kubectl get events`
// lists: the events page shows no more than that would.
var eventsResource = kind{"", "events"}

// canList reports whether u may list res in namespace ns (all namespaces,
// or a cluster-scoped kind, when ns is empty). An unanswered review is a
// refusal: the page then shows less, never more.
func (a *access) canList(ctx context.Context, u user.Info, res kind, ns string) bool {
	decision, _, err := a.authz.Authorize(ctx, authorizer.AttributesRecord{
		User: u, Verb: "list", APIGroup: res.group, Resource: res.name, Namespace: ns, ResourceRequest: true,
	})
	return err == nil && decision == authorizer.DecisionAllow
}

// canGet reports whether u may get the object name of res in namespace ns.
func (a *access) canGet(ctx context.Context, u user.Info, res kind, ns, name string) bool {
	decision, _, err := a.authz.Authorize(ctx, authorizer.AttributesRecord{
		User: u, Verb: "get", APIGroup: res.group, Resource: res.name, Namespace: ns, Name: name, ResourceRequest: true,
	})
	return err == nil && decision == authorizer.DecisionAllow
}
