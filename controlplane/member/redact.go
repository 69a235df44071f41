package member

import (
	"encoding/base64"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// redacted replaces a secret in an error message.
const redacted = "[redacted]"

// secrets are the values no error may contain. This package never puts a
// credential into a message on purpose; scrubbing is the second line of
// defence against a library that quotes what it was given.
type secrets []string

// secrets collects the connection's own secret values.
func (c Connection) secrets() secrets {
	s := secrets{c.Token}
	s = append(s, pemSecrets(c.ClientKey)...)
	if c.Exec != nil {
		for _, v := range c.Exec.Env {
			s = append(s, v)
		}
	}
	s = append(s, proxyPassword(c.ProxyURL))
	// An inline kubeconfig that does not parse never gets this far: Validate
	// refuses it without quoting the parser.
	if cfg, err := clientcmd.Load(c.Kubeconfig); err == nil && len(c.Kubeconfig) > 0 {
		s = append(s, kubeconfigSecrets(cfg)...)
	}
	return s
}

// kubeconfigSecrets collects the credentials of every user of a kubeconfig.
func kubeconfigSecrets(cfg *clientcmdapi.Config) secrets {
	var s secrets
	for _, user := range cfg.AuthInfos {
		s = append(s, user.Token, user.Password)
		s = append(s, pemSecrets(user.ClientKeyData)...)
		if user.Exec != nil {
			for _, env := range user.Exec.Env {
				s = append(s, env.Value)
			}
		}
		if user.AuthProvider != nil {
			for _, v := range user.AuthProvider.Config {
				s = append(s, v)
			}
		}
	}
	for _, cluster := range cfg.Clusters {
		s = append(s, proxyPassword(cluster.ProxyURL))
	}
	return s
}

// restConfigSecrets collects the credentials a built *rest.Config holds.
func restConfigSecrets(cfg *rest.Config) secrets {
	s := secrets{cfg.BearerToken, cfg.Password}
	s = append(s, pemSecrets(cfg.KeyData)...)
	if cfg.ExecProvider != nil {
		for _, env := range cfg.ExecProvider.Env {
			s = append(s, env.Value)
		}
	}
	return s
}

// pemSecrets returns a PEM private key, its base64 form as a kubeconfig
// holds it, and each of its body lines, any of which a parser might quote.
func pemSecrets(key []byte) secrets {
	if len(key) == 0 {
		return nil
	}
	s := secrets{string(key), base64.StdEncoding.EncodeToString(key)}
	for line := range strings.Lines(string(key)) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "-----") && len(line) >= 16 {
			s = append(s, line)
		}
	}
	return s
}

func proxyPassword(proxy string) string {
	u, err := url.Parse(proxy)
	if err != nil || u.User == nil {
		return ""
	}
	password, _ := u.User.Password()
	return password
}

// scrub returns err with every secret in its message replaced. The result
// still unwraps to err, so errors.Is and errors.As keep working.
func (s secrets) scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := s.scrubString(msg)
	if clean == msg {
		return err
	}
	return &scrubbedError{msg: clean, err: err}
}

func (s secrets) scrubString(msg string) string {
	// Longest first, so that a secret containing another is hidden whole.
	sorted := slices.Clone(s)
	slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	for _, secret := range sorted {
		if secret != "" {
			msg = strings.ReplaceAll(msg, secret, redacted)
		}
	}
	// A library may quote a fragment of a key or token rather than all of
	// it: hide any long token-like word that is part of a secret.
	return secretWord.ReplaceAllStringFunc(msg, func(word string) string {
		for _, secret := range s {
			if strings.Contains(secret, word) {
				return redacted
			}
		}
		return word
	})
}

// secretWord matches a run of characters tokens and base64 are made of,
// long enough not to match ordinary words of a message by chance.
var secretWord = regexp.MustCompile(`[A-Za-z0-9+/=_.-]{12,}`)

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }
