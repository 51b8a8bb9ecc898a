#pragma once
// The version of the code this binary was built from (git describe at build time, "-dirty" with uncommitted
// changes; the project version outside a git checkout). Every run records it; suites resume only runs of the same.
namespace ps {

const char* codeVersion();

}  // namespace ps
