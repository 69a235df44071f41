package controller

import ()

// bindingOwnedAnnotations are the Work annotations the binding controller
// alone writes and removes: a Work written without them loses them.
var bindingOwnedAnnotations = []string{AnnotationStableRevision, AnnotationStableManifests}
