// Package docs holds partfs's documentation: the contract (spec.md), the
// choices made where it is silent, the design and Kafka's formats. It has
// no code; its tests check that every cite of the contract or of the
// format reference anywhere in the repository names a section these files
// have, that nothing points outside the repository for them, and that
// design.md's table of packages is the layering of the tree's imports
// (TestLayers, in the spirit of a forbidden-imports lint).
package docs
