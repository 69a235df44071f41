# A customization has no remote object: import reads it from Karmada YAML.
# The ID is the file, a colon, then the customization's name.
terraform import flotilla_resource_interpreter.rollout argo-rollout.yaml:flotilla-argo-rollout
