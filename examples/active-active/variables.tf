variable "kubeconfig_path" {
  description = "Kubeconfig with a context for each member cluster. The default is the one `make fleet-up` (and `make demo`) writes."
  type        = string
  default     = "~/.cache/flotilla/fleet/kubeconfig"
}

variable "east_context" {
  description = "Kubeconfig context of the east cluster."
  type        = string
  default     = "member1"
}

variable "west_context" {
  description = "Kubeconfig context of the west cluster."
  type        = string
  default     = "member2"
}

variable "image" {
  description = "Image of the web container, as the east cluster pulls it."
  type        = string
  default     = "nginx:1.27"
}

variable "replicas" {
  description = "Replicas of the web Deployment across both clusters."
  type        = number
  default     = 3
}

variable "east_weight" {
  description = "Static weight of east (at least 1): east gets east_weight / (east_weight + west_weight) of the replicas."
  type        = number
  default     = 1
}

variable "west_weight" {
  description = "Static weight of west (at least 1)."
  type        = number
  default     = 2
}

variable "east_serving" {
  description = "Set to false to take east out of service: the policy selects serving clusters only, so east's replicas move to west and its copies are removed."
  type        = bool
  default     = true
}

variable "west_registry" {
  description = "Registry the west cluster pulls the image from instead of the one in var.image."
  type        = string
  default     = "registry.eu.example.com"
}
