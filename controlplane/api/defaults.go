package api

// Defaults mirror what Karmada's CRD schemas and mutating webhooks fill in,
// so a policy decoded here reads the same as one read back from Karmada.
// Every Default* function is idempotent.

// Karmada's failover defaults.
const (
	// DefaultTolerationSeconds is decisionConditions.tolerationSeconds when unset.
	DefaultTolerationSeconds int32 = 300
	// DefaultGracePeriodSeconds is gracePeriodSeconds when purgeMode is Gracefully.
	DefaultGracePeriodSeconds int32 = 600
)

// DefaultPropagationPolicy fills in a namespaced propagation policy.
func DefaultPropagationPolicy(p *PropagationPolicy) {
	DefaultPropagationSpec(&p.Spec, p.Namespace)
}

// DefaultClusterPropagationPolicy fills in a cluster-wide propagation policy.
func DefaultClusterPropagationPolicy(p *ClusterPropagationPolicy) {
	DefaultPropagationSpec(&p.Spec, "")
}

// DefaultPropagationSpec fills in a propagation spec. namespace is the
// policy's namespace, empty for a cluster-wide policy; selectors without a
// namespace inherit it.
func DefaultPropagationSpec(spec *PropagationSpec, namespace string) {
	defaultSelectors(spec.ResourceSelectors, namespace)
	if spec.Priority == nil {
		var zero int32
		spec.Priority = &zero
	}
	if spec.Preemption == "" {
		spec.Preemption = PreemptNever
	}
	if spec.ConflictResolution == "" {
		spec.ConflictResolution = ConflictAbort
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = DefaultSchedulerName
	}
	DefaultPlacement(&spec.Placement)
	defaultFailover(spec.Failover)
}

// DefaultPlacement fills in a placement: replica scheduling is Duplicated
// when absent and Divided when present without a type (the CRD default);
// Divided without a division preference is Weighted; a spread constraint
// with neither field nor label spreads by cluster, and minGroups 0 is 1.
func DefaultPlacement(p *Placement) {
	if p.ReplicaScheduling == nil {
		p.ReplicaScheduling = &ReplicaSchedulingStrategy{ReplicaSchedulingType: ReplicaSchedulingTypeDuplicated}
	}
	rs := p.ReplicaScheduling
	if rs.ReplicaSchedulingType == "" {
		rs.ReplicaSchedulingType = ReplicaSchedulingTypeDivided
	}
	if rs.ReplicaSchedulingType == ReplicaSchedulingTypeDivided && rs.ReplicaDivisionPreference == "" {
		rs.ReplicaDivisionPreference = ReplicaDivisionPreferenceWeighted
	}
	for i := range p.SpreadConstraints {
		sc := &p.SpreadConstraints[i]
		if sc.SpreadByField == "" && sc.SpreadByLabel == "" {
			sc.SpreadByField = SpreadByFieldCluster
		}
		if sc.MinGroups == 0 {
			sc.MinGroups = 1
		}
	}
}

// defaultFailover fills in purge modes, the grace period and the toleration.
func defaultFailover(f *FailoverBehavior) {
	if f == nil {
		return
	}
	if app := f.Application; app != nil {
		if app.DecisionConditions.TolerationSeconds == nil {
			t := DefaultTolerationSeconds
			app.DecisionConditions.TolerationSeconds = &t
		}
		if app.PurgeMode == "" {
			app.PurgeMode = PurgeModeGracefully
		}
		if isGraceful(app.PurgeMode) && app.GracePeriodSeconds == nil {
			g := DefaultGracePeriodSeconds
			app.GracePeriodSeconds = &g
		}
	}
	if c := f.Cluster; c != nil && c.PurgeMode == "" {
		c.PurgeMode = PurgeModeGracefully
	}
}

// isGraceful treats the deprecated Graciously as Gracefully.
func isGraceful(m PurgeMode) bool {
	return m == PurgeModeGracefully || m == PurgeModeGraciously
}

// DefaultOverridePolicy fills in a namespaced override policy.
func DefaultOverridePolicy(p *OverridePolicy) {
	DefaultOverrideSpec(&p.Spec, p.Namespace)
}

// DefaultClusterOverridePolicy fills in a cluster-wide override policy.
func DefaultClusterOverridePolicy(p *ClusterOverridePolicy) {
	DefaultOverrideSpec(&p.Spec, "")
}

// DefaultOverrideSpec fills in an override spec: selectors inherit the
// policy's namespace, and the deprecated top-level targetCluster and
// overriders become the only override rule, as Karmada's override manager
// reads them. When overrideRules is also set the spec is left alone so
// validation can report the conflict.
func DefaultOverrideSpec(spec *OverrideSpec, namespace string) {
	defaultSelectors(spec.ResourceSelectors, namespace)
	deprecated := spec.TargetCluster != nil || !spec.Overriders.IsEmpty()
	if deprecated && len(spec.OverrideRules) == 0 {
		spec.OverrideRules = []RuleWithCluster{{TargetCluster: spec.TargetCluster, Overriders: spec.Overriders}}
		spec.TargetCluster = nil
		spec.Overriders = Overriders{}
	}
}

// IsEmpty reports whether no overrider is set.
func (o *Overriders) IsEmpty() bool {
	return len(o.Plaintext) == 0 && len(o.ImageOverrider) == 0 &&
		len(o.CommandOverrider) == 0 && len(o.ArgsOverrider) == 0 &&
		len(o.LabelsOverrider) == 0 && len(o.AnnotationsOverrider) == 0 &&
		len(o.FieldOverrider) == 0
}

// DefaultResourceBinding fills in a binding's copied placement.
func DefaultResourceBinding(b *ResourceBinding) {
	if b.Spec.Placement != nil {
		DefaultPlacement(b.Spec.Placement)
	}
}

// defaultSelectors gives selectors without a namespace the policy's.
func defaultSelectors(selectors []ResourceSelector, namespace string) {
	if namespace == "" {
		return
	}
	for i := range selectors {
		if selectors[i].Namespace == "" {
			selectors[i].Namespace = namespace
		}
	}
}
