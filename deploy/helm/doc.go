// Package helm holds the render test of the codelotse Helm chart in
// codelotse/: it renders the chart through Helm's Go library (no helm
// binary needed), decodes every manifest strictly into the typed
// Kubernetes API structs and checks the promises of both profiles.
package helm
