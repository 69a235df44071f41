package cli

import (
	"fmt"
	"io"
	"strings"
)

func pluginCompletion(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || (args[0] != "bash" && args[0] != "zsh") {
		fmt.Fprintln(stderr, "kubectl flotilla completion: name bash or zsh")
		return 2
	}
	names := make([]string, len(pluginVerbs))
	for i, v := range pluginVerbs {
		names[i] = v.name
	}
	verbs := strings.Join(names, " ")
	flags := "--kubeconfig --context --as --request-timeout --namespace --clusters --all-namespaces --output --source --container --tail --follow --stdin --tty --overwrite"
	if args[0] == "zsh" {
		// zsh runs the bash function through bashcompinit.
		fmt.Fprintln(stdout, "autoload -U +X bashcompinit && bashcompinit")
	}
	// kubectl completes `kubectl flotilla ...` through a plugin's
	// kubectl_complete-flotilla executable; the function serves the
	// binary's own names, kubectl-flotilla and the provider's.
	fmt.Fprintf(stdout, `_kubectl_flotilla() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W %q -- "$cur"))
  elif [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W %q -- "$cur"))
  elif [ "${COMP_WORDS[1]}" = completion ]; then
    COMPREPLY=($(compgen -W "bash zsh" -- "$cur"))
  elif [ "${COMP_WORDS[1]}" = top ]; then
    COMPREPLY=($(compgen -W "pods nodes" -- "$cur"))
  fi
}
complete -F _kubectl_flotilla kubectl-flotilla
`, verbs, flags)
	return 0
}
