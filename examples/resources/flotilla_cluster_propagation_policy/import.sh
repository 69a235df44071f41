# A policy has no remote object: import reads it from Karmada YAML.
# The ID is the file, a colon, then the name (cluster-wide: no namespace).
terraform import flotilla_cluster_propagation_policy.platform policies.yaml:platform
