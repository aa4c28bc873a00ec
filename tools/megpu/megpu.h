/* SPDX-License-Identifier: MIT */
#ifndef MEGPU_TOOL_H
#define MEGPU_TOOL_H

/* Each subcommand: argc/argv start at the subcommand's name. */
int cmd_info(int argc, char **argv);
int cmd_demo(int argc, char **argv);

#endif
