package shared

// BindingOwnedAnnotations are the Work annotations the binding controller
// alone writes and removes: a Work written without them loses them.
var BindingOwnedAnnotations = []string{AnnotationStableRevision, AnnotationStableManifests}

// Annotations of a staged rollout. The revision and the stable copy live on
// each Work, beside the manifests they describe: the copy is exactly the
// rendering the cluster last ran healthy, it survives restarts and leader
// changes, and it goes away with the Work. See "Staged rollouts in
// continuous mode" in the design decisions guide.
const (
	// AnnotationRolloutResume, set on a resource template to a new value,
	// resumes its halted rollout (the failed gate is judged again, with a
	// fresh timeout).
	AnnotationRolloutResume = "rollout.flotilla.io/resume"
	// AnnotationRolloutRevision holds the rollout revision whose rendering
	// a Work's manifests are.
	AnnotationRolloutRevision = "rollout.flotilla.io/revision"
	// AnnotationStableRevision holds the revision of the Work's stable
	// copy: the rendering to roll back to while a newer one is on trial.
	// Present and empty, it says the cluster had no rendering before.
	AnnotationStableRevision = "rollout.flotilla.io/stable-revision"
	// AnnotationStableManifests holds the stable copy's manifests (JSON).
	AnnotationStableManifests = "rollout.flotilla.io/stable-manifests"
)
