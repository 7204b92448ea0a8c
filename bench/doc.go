// Package bench holds benchmarks of the generated code that do not belong in
// generated/ (which is generator output): see encode_test.go and
// BENCHMARKS.md at the repository root.
package bench
