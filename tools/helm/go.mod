module github.com/flotilla-io/terraform-provider-flotilla/tools/helm

go 1.26

require helm.sh/helm/v3 v3.22.0
