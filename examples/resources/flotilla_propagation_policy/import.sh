# A policy has no remote object: import reads it from Karmada YAML.
# The ID is the file, a colon, then namespace/name.
terraform import flotilla_propagation_policy.web policies.yaml:default/web
