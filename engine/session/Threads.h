#pragma once
namespace ps {
// Splits `total` CPU threads (0: every core) among `stages` workers and keeps OpenBLAS from starting its own
// pool on top of them. Returns the intra-op threads each stage worker should use.
int configureThreads(int total, int stages);
// Keeps freed large blocks in the heap instead of returning them to the kernel, so the next tensor or payload
// of the same size reuses warm pages: fresh mmap'd pages cost a fault each, which made an 8-bit quantize of 64 MB
// take twice as long as the arithmetic. Called by configureThreads; idempotent.
void tuneAllocator();
// Cores of this machine.
int hardwareThreads();
}  // namespace ps
