//! Integration tests: one test binary that runs the real `referee`
//! executable (and real bot processes), module by module.

mod cli;
mod codingame;
mod common;
mod confinement;
mod console;
mod console_grading;
mod containers;
mod docs;
mod external;
mod grade;
mod grade_all;
mod graders;
mod grading;
mod hostile_words;
mod layers;
mod league;
mod matches;
mod net;
mod play_notakto;
mod report;
mod reuse;
mod runs;
mod sandbox;
mod sandbox_trust;
mod slow_clients;
mod slurm;
mod swiss;
mod tournament;
