#!/usr/bin/env bash
# The README's main job: a local fleet of three real member clusters, the
# provider built from this checkout, and examples/active-active planned and
# applied against them. `make demo` runs it after `make testenv build`.
#
# It is idempotent: the fleet is started only when it is not running, and the
# demo's Terraform working directory lives in the fleet directory, so a second
# run finds its state (a member joins a fleet under one name, so a fresh state
# against the same members would be refused) and `make fleet-down` removes it
# together with the clusters.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fleet_dir=${FLEET_DIR:-$HOME/.cache/flotilla/fleet}
kubeconfig=$fleet_dir/kubeconfig
work=$fleet_dir/demo
example=$root/examples/active-active
bin_dir=$root/bin

section() { printf '\n==> %s\n' "$*"; }
die() { printf 'demo: %s\n' "$*" >&2; exit 1; }

# Terraform prints colours only to a terminal.
tf_flags=()
[ -t 1 ] || tf_flags+=(-no-color)

section "Checking tools"
command -v terraform >/dev/null 2>&1 ||
  die "terraform is not on PATH: install Terraform 1.11 or newer (https://developer.hashicorp.com/terraform/install)"
tf_version=$(terraform version -json 2>/dev/null | sed -n 's/.*"terraform_version": *"\([0-9.]*\)".*/\1/p')
case $tf_version in
  0.* | 1.[0-9] | 1.[0-9].* | 1.10 | 1.10.*) die "terraform $tf_version is too old: flotilla_manifest's write-only attributes need 1.11 or newer" ;;
esac
echo "terraform $tf_version"
[ -x "$bin_dir/terraform-provider-flotilla" ] ||
  die "$bin_dir/terraform-provider-flotilla is missing: run 'make demo' (it builds it) or 'make build'"
echo "provider  $bin_dir/terraform-provider-flotilla"

section "Starting 3 local member clusters (member1, member2, member3)"
(cd "$root" && go run ./internal/testenv/cmd/fleet up -n 3 -dir "$fleet_dir")
[ -f "$kubeconfig" ] || die "the fleet wrote no kubeconfig at $kubeconfig"

section "Using the provider from bin/ (dev_overrides, no registry)"
mkdir -p "$work"
# A CLI configuration of the demo's own: it points Terraform at the binary
# `make build` wrote and leaves the user's ~/.terraformrc alone.
export TF_CLI_CONFIG_FILE=$work/terraformrc
cat >"$TF_CLI_CONFIG_FILE" <<EOF
provider_installation {
  dev_overrides {
    "registry.terraform.io/flotilla-io/flotilla" = "$bin_dir"
  }
  direct {}
}
EOF
export CHECKPOINT_DISABLE=1
echo "TF_CLI_CONFIG_FILE=$TF_CLI_CONFIG_FILE"
# Terraform 1.11 says "Skip terraform init when using provider development
# overrides", and init would fail: it asks the registry for flotilla-io/flotilla.
# plan and apply need no init, since the only provider is overridden.
echo "(no 'terraform init': with dev_overrides it is not needed, and it would look for the provider in the registry)"

section "Copying examples/active-active into $work"
# Refresh the configuration from the checkout; keep the state of earlier runs.
find "$work" -maxdepth 1 -type f \( -name '*.tf' -o -name '*.yaml' \) -delete
cp "$example"/*.tf "$example"/*.yaml "$work"/
cat >"$work/demo.auto.tfvars" <<EOF
# Written by scripts/demo.sh: the fleet's kubeconfig.
kubeconfig_path = "$kubeconfig"
EOF
ls "$work"
cd "$work"

section "terraform plan: what each cluster will get, before anything rolls out"
# The whole plan, with the exact object each cluster gets (rendered), goes to
# plan.txt; the summary and the planned outputs are shown here.
if ! terraform plan -no-color -input=false -out=tfplan >plan.txt 2>&1; then
  cat plan.txt
  die "terraform plan failed"
fi
grep -E '^  # |^Plan:|^No changes' plan.txt || true
sed -n '/^Changes to Outputs:/,/^─/p' plan.txt | sed '$d'
echo "(the whole plan: $work/plan.txt)"

section "terraform apply: exactly that plan"
terraform apply "${tf_flags[@]}" -input=false tfplan

section "Placement"
if command -v jq >/dev/null 2>&1; then
  terraform output -json | jq -r '
    .images.value as $images | .status.value as $status |
    ["MANIFEST", "CLUSTER", "REPLICAS", "IMAGE", "HEALTH"],
    (.placement.value | to_entries[] | .key as $m | .value | to_entries[] |
      [$m, .key, (.value | tostring), (if ($m | startswith("Deployment/")) then $images[.key] else "-" end), $status[$m]])
    | @tsv' | if command -v column >/dev/null 2>&1; then column -t -s $'\t'; else cat; fi
else
  echo "(install jq for a table; the placement as Terraform prints it:)"
  terraform output placement
  terraform output images
fi

section "terraform plan again: it must be empty"
set +e
terraform plan "${tf_flags[@]}" -input=false -detailed-exitcode
rc=$?
set -e
case $rc in
  0) echo "OK: the follow-up plan is empty; the members run exactly what was planned." ;;
  2) die "the follow-up plan is not empty (see above): apply did not converge" ;;
  *) die "the follow-up plan failed (exit $rc)" ;;
esac

section "Done: the fleet keeps running"
cat <<EOF
Look at what runs in each member:
  kubectl --kubeconfig $kubeconfig --context member1 get deploy,svc
  kubectl --kubeconfig $kubeconfig --context member2 get deploy -o wide

Plan a change before it rolls out (see "Plan before rollout" in the README):
  cd $work
  export TF_CLI_CONFIG_FILE=$TF_CLI_CONFIG_FILE
  terraform plan -var image=nginx:1.28 -var east_weight=2 -var west_weight=1

Stop the clusters (this also removes the demo's state):
  make fleet-down
EOF
