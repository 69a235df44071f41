# Sourced by scripts/bench-terraform.sh and scripts/bench-kubernetes.sh
# after they set $root: a work directory, removed on exit, with a fleet of
# apiserver-only members in $fleet_dir that is stopped on exit.
work=$(mktemp -d)
fleet_dir="$work/fleet"
cleanup() {
  # From the module root: the scripts work in another directory, where
  # go run fails, and the members would be left running.
  (cd "$root" && go run ./internal/testenv/cmd/fleet down -dir "$fleet_dir") >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# fleet_up N starts N apiserver-only members sharing one etcd; their
# kubeconfig is $fleet_dir/kubeconfig, with contexts member1..memberN.
fleet_up() {
  (cd "$root" && go run ./internal/testenv/cmd/fleet up -n "$1" -mode apiserver-only -dir "$fleet_dir") >/dev/null
}
