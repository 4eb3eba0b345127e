#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder image (Ubuntu).
# The autograder zip holds: run_autograder, setup.sh, referee (a Linux
# x86_64 release binary: `cargo build --release`, then target/release/referee)
# and rubrics/ (this repository's rubrics folder).
set -eu
apt-get update
apt-get install -y python3
chmod +x /autograder/source/referee
