#pragma once
namespace ps {
// Splits `total` CPU threads (0: every core) among `stages` workers and keeps OpenBLAS from starting its own
// pool on top of them. Returns the intra-op threads each stage worker should use.
int configureThreads(int total, int stages);
// Cores of this machine.
int hardwareThreads();
}  // namespace ps
