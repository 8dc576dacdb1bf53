// SPDX-License-Identifier: GPL-2.0
/* main.c - main() of each build/bench/<name>: the runner (runner.c). */
#include "runner.h"

int main(int argc, char **argv)
{
	return runner_main(argc, argv);
}
