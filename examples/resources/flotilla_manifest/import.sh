# The ID is the template's identity, as flotilla_manifest's id shows it
# ("<group>/<version>, Kind=<kind>, <namespace>/<name>"), followed by what
# only the configuration knows: each member as
# cluster=NAME,KUBECONFIG_PATH[,CONTEXT] (as in flotilla_cluster's import ID),
# so that import reads the object back from it, and the claiming policy as
# the policy attribute shows it.
terraform import flotilla_manifest.web 'apps/v1, Kind=Deployment, default/web;cluster=east,~/.kube/config,kind-east;cluster=west,~/.kube/config,kind-west;policy=PropagationPolicy default/web'
