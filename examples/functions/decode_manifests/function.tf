locals {
  # Usually: provider::flotilla::decode_manifests(file("${path.module}/app.yaml"))
  manifests = provider::flotilla::decode_manifests(<<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: web-config
      namespace: default
    data:
      mode: fast
    ---
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
      namespace: default
    spec:
      replicas: 3
      selector:
        matchLabels: {app: web}
      template:
        metadata:
          labels: {app: web}
        spec:
          containers:
            - name: web
              image: nginx:1.27
    YAML
  )

  # Key the manifests by kind/name, ready for for_each.
  by_name = { for m in local.manifests : "${m.kind}/${m.metadata.name}" => m }
}

output "manifest_keys" {
  value = keys(local.by_name)
}
