/* replay.h - `petstore-conform replay FILE`: re-sends a failure the
 * generative phase saved (runner/gen_case.h, --replay-dir) and judges the
 * answer again with the same oracle (runner/gen_judge.h). */
#ifndef PS_RUNNER_REPLAY_H
#define PS_RUNNER_REPLAY_H

/* argv[0] is "replay". Prints the request (keys redacted), the answer and
 * the verdict on stdout. Returns the exit code: 0 the service now answers
 * as the spec says, 1 the failure is still there, 2 usage or a bad file, 3
 * no answer (or a 429: nothing to judge). */
int ps_conform_replay_main(int argc, char **argv);

#endif
