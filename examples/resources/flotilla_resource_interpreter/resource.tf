# flotilla's Argo Rollout customization (examples/interpreter/argo-rollout.yaml),
# its Lua scripts read from the Karmada YAML rather than copied into HCL.
locals {
  rollout = yamldecode(file("${path.module}/argo-rollout.yaml")).spec
}

resource "flotilla_resource_interpreter" "rollout" {
  name   = "flotilla-argo-rollout"
  target = { api_version = local.rollout.target.apiVersion, kind = local.rollout.target.kind }
  customizations = {
    replica_resource          = { lua_script = local.rollout.customizations.replicaResource.luaScript }
    replica_revision          = { lua_script = local.rollout.customizations.replicaRevision.luaScript }
    retention                 = { lua_script = local.rollout.customizations.retention.luaScript }
    status_reflection         = { lua_script = local.rollout.customizations.statusReflection.luaScript }
    status_aggregation        = { lua_script = local.rollout.customizations.statusAggregation.luaScript }
    health_interpretation     = { lua_script = local.rollout.customizations.healthInterpretation.luaScript }
    dependency_interpretation = { lua_script = local.rollout.customizations.dependencyInterpretation.luaScript }
  }
}

