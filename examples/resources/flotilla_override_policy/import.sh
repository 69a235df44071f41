# A policy has no remote object: import reads it from Karmada YAML.
# The ID is the file, a colon, then namespace/name.
terraform import flotilla_override_policy.eu_registry policies.yaml:default/eu-registry
