// Package customization is the customization status controller: each
// ResourceInterpreterCustomization gets a Ready condition saying what the
// controllers' one interpreter cache (hoststore.Interpreters) knows of
// it: whether its scripts loaded, and whether a call ran out of a budget,
// which refuses its kind until the customization changes; a Warning Event
// says so when the condition becomes False. The cache tells it when a
// report may have changed (Interpreters.Notify). It only reports: the
// refusal itself is the cache's, in hoststore.
//
// It imports controlplane/controller/shared and no other controller
// package.
package customization
