/*
 * The write model's landing order for write-seed 0x4004
 * (megpu-writes-test.c, test_writes_replay): the tick each
 * write landed at, then the fresh pages of each FILL at its
 * TIMESTAMP. Generated; review changes.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
static const uint32_t reference_tick[REPLAY_WRITES] = {
    134, 41, 39, 41, 10, 37, 88, 21, 82, 45, 169, 153,
    10, 14, 52, 24, 57, 69, 101, 102, 241, 61, 175, 54,
    37, 131, 137, 18, 13, 8, 43, 26, 10, 116, 47, 151,
    38, 5, 22, 182, 86, 44, 27, 174, 13, 13, 49, 27,
};
static const uint32_t reference_fresh[REPLAY_TRIES] = {
    0x0010, 0x0000, 0x0021, 0x0083, 0x008a, 0x056a, 0x0000, 0x0000,
};
