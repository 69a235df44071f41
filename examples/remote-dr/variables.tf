variable "kubeconfig_path" {
  description = "Kubeconfig with a context for each member cluster. The default is the one `make fleet-up` (and `make demo`) writes."
  type        = string
  default     = "~/.cache/flotilla/fleet/kubeconfig"
}

variable "primary_context" {
  description = "Kubeconfig context of the primary cluster."
  type        = string
  default     = "member1"
}

variable "dr_context" {
  description = "Kubeconfig context of the DR cluster."
  type        = string
  default     = "member2"
}

variable "primary_taints" {
  description = <<-EOT
    Taints of the primary cluster. A NoExecute taint the policy does not
    tolerate takes the primary out of service, and the app fails over to DR:
    -var 'primary_taints=[{key="flotilla.io/maintenance", effect="NoExecute"}]'
  EOT
  type = list(object({
    key    = string
    value  = optional(string)
    effect = string
  }))
  default = []
}

variable "replicas" {
  description = "Replicas of the payments Deployment, all in one cluster at a time."
  type        = number
  default     = 3
}
