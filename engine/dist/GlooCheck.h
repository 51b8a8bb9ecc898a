#pragma once
// Whether a freshly formed Gloo group joins the run's own ranks. Gloo's listeners accept the first connection that
// comes and read nothing from it first, so another process that connects before the rank a listener waits for takes
// that rank's place: both sides believe they are connected (the rank's connection waits in the listener's backlog)
// and the group fails at its first message, after the run's timeout. Before a group is used, every rank therefore
// sends every other rank a word derived from the run's token, the attempt and the pair, and waits a short while for
// each peer's: a stranger neither knows the token nor is reached by the peer's word, so such a group is found out
// in one short wait and formed again.
#include <chrono>
#include <string>

namespace c10d {
class ProcessGroupGloo;
}

namespace ps {

// Whether a Gloo error's text says it waited out its timeout (rather than losing its connection).
bool glooTimedOut(const std::string& what);

// The word rank `from` sends rank `to` for a group's `attempt`.
uint64_t glooCheckWord(const std::string& token, int attempt, int from, int to);

// Sends each other rank of `group` its word and waits at most `wait` in all for theirs (and for its own to leave).
// True when every peer's word came and was right; otherwise false, with `why` naming the first peer that was silent,
// closed or wrong. Whatever is still pending after the wait is abandoned: the caller drops a group that failed.
bool glooGroupAnswers(c10d::ProcessGroupGloo& group, int rank, int world, const std::string& token, int attempt,
                      std::chrono::milliseconds wait, std::string* why);

}  // namespace ps
