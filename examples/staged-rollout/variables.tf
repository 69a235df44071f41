variable "kubeconfig_path" {
  description = "Kubeconfig with a context for each member cluster. The default is the one `make fleet-up` (and `make demo`) writes."
  type        = string
  default     = "~/.cache/flotilla/fleet/kubeconfig"
}

variable "canary_context" {
  description = "Kubeconfig context of the canary cluster."
  type        = string
  default     = "member1"
}

variable "eu_west_context" {
  description = "Kubeconfig context of the eu-west cluster."
  type        = string
  default     = "member2"
}

variable "us_east_context" {
  description = "Kubeconfig context of the us-east cluster."
  type        = string
  default     = "member3"
}

variable "image" {
  description = "Image of the web container. On the local fleet (kwok), an image tagged `broken` never becomes ready: try it to see a gate fail."
  type        = string
  default     = "nginx:1.27"
}

variable "replicas" {
  description = "Replicas of web in every cluster."
  type        = number
  default     = 2
}

variable "on_gate_failure" {
  description = "What a failed gate does: Halt (the other clusters keep the previous version) or Rollback (the canary goes back to it too)."
  type        = string
  default     = "Halt"
}

variable "canary_bake_seconds" {
  description = "Seconds web must stay healthy in the canary before the other clusters get the change."
  type        = number
  default     = 30
}

variable "bake_seconds" {
  description = "Seconds web must stay healthy in each of the other clusters before the next one gets the change."
  type        = number
  default     = 10
}

variable "gate_timeout_seconds" {
  description = "Seconds each stage has to become healthy before its gate fails."
  type        = number
  default     = 300
}
