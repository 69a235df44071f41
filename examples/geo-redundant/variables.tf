variable "kubeconfig_path" {
  description = "Kubeconfig with a context for each member cluster. The default is the one `make fleet-up` (and `make demo`) writes."
  type        = string
  default     = "~/.cache/flotilla/fleet/kubeconfig"
}

variable "contexts" {
  description = "Kubeconfig context of each cluster."
  type = object({
    us_east_1 = string
    us_east_2 = string
    eu_west_1 = string
  })
  default = {
    us_east_1 = "member1"
    us_east_2 = "member2"
    eu_west_1 = "member3"
  }
}

variable "replicas" {
  description = "Replicas of the catalog Deployment, divided between the regions."
  type        = number
  default     = 4
}
