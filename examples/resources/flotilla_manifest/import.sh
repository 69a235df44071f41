# The ID is the template's identity, as flotilla_manifest's id shows it:
# "<group>/<version>, Kind=<kind>, <namespace>/<name>". The next apply computes
# the placement from the configuration and takes back the objects flotilla
# already owns in each cluster.
terraform import flotilla_manifest.web 'apps/v1, Kind=Deployment, default/web'
