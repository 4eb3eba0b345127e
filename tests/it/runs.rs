//! Run folders that survive what the machine does to them: a disk that
//! fills in the middle of a run, files without an end.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{lines, referee, resume_equals_full, root, run, stderr, stdout};

/// A small tmpfs mounted for one test, unmounted when dropped (also when
/// the test fails).
struct SmallDisk {
    dir: PathBuf,
}

impl SmallDisk {
    /// Mounts a tmpfs of `size` (`mount -o size=`) on a new folder in
    /// `parent`, or says on stderr why it cannot and returns `None`.
    fn mount(parent: &Path, size: &str) -> Option<SmallDisk> {
        if !nix::unistd::Uid::effective().is_root() {
            crate::common::skipped("mounting a small tmpfs needs root");
            return None;
        }
        let dir = parent.join("disk");
        std::fs::create_dir(&dir).ok()?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(SmallDisk { dir }),
            Ok(o) => {
                crate::common::skipped(&format!(
                    "cannot mount a tmpfs here: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                ));
                None
            }
            Err(e) => {
                crate::common::skipped(&format!("cannot run mount: {e}"));
                None
            }
        }
    }

    /// Fills the disk with one file, then frees `free` bytes of it: the
    /// room left for what comes next. Returns the file.
    fn fill_leaving(&self, free: u64) -> PathBuf {
        let path = self.dir.join("filler");
        let mut f = std::fs::File::create(&path).unwrap();
        let chunk = vec![0u8; 4096];
        let mut written = 0u64;
        while let Ok(n) = f.write(&chunk) {
            if n == 0 {
                break;
            }
            written += n as u64;
        }
        f.set_len(written.saturating_sub(free)).unwrap();
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        // Lazy: a bot still holding a file cannot keep the mount alive.
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

fn tournament_file(dir: &Path) -> String {
    let path = dir.join("t.toml");
    std::fs::write(
        &path,
        "game = \"tictactoe\"\ngames_per_pairing = 100\nrandom_plies = 2\nseed = 5\n\
         [[bots]]\nname = \"random\"\nbuiltin = \"random\"\n\
         [[bots]]\nname = \"greedy\"\nbuiltin = \"greedy\"\n\
         [[bots]]\nname = \"optimal\"\nbuiltin = \"optimal\"\n",
    )
    .unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn a_disk_that_fills_mid_run_stops_it_on_a_whole_game_and_resume_finishes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tournament_file(tmp.path());
    let full = tmp.path().join("full");
    let full = full.to_str().unwrap();
    let o = run(&["tournament", &file, "--out", full, "--jobs", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(lines(full), 300);

    let Some(disk) = SmallDisk::mount(tmp.path(), "512k") else {
        return;
    };
    // Room for the run's small files (a page each) and a few pages of
    // games: the disk fills after some games, long before the 300th.
    let filler = disk.fill_leaving(9 * 4096);
    let cut = disk.dir.join("run");
    let cut = cut.to_str().unwrap();
    let o = run(&[
        "tournament",
        &file,
        "--out",
        cut,
        "--jobs",
        "2",
        "--no-report",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains("cut back to its last complete game"), "{err}");
    assert!(err.contains("--resume"), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "one error line: {err}");
    let text = std::fs::read(Path::new(cut).join("games.jsonl")).unwrap();
    assert_eq!(text.last(), Some(&b'\n'), "the file ends on a whole game");
    let written = lines(cut);
    assert!((1..300).contains(&written), "{written} games written");

    std::fs::remove_file(filler).unwrap();
    resume_equals_full(&file, cut, full, 300);
}

#[test]
fn an_endless_openings_file_or_games_line_is_refused_at_a_cap() {
    // /dev/zero never ends: read whole, it grew to gigabytes in seconds.
    let o = run(&[
        "match",
        "tictactoe",
        "random",
        "greedy",
        "--games",
        "2",
        "--openings",
        "/dev/zero",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("/dev/zero: larger than 16 MiB"), "{err}");

    // A run folder whose games file is one line that never ends.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("games.jsonl"), vec![b'x'; 3 << 20]).unwrap();
    let o = run(&["report", dir.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("games.jsonl:1: a line longer than 1 MiB"),
        "{err}"
    );
}

#[test]
fn resume_and_merge_notice_an_edited_helper_module() {
    let tmp = tempfile::tempdir().unwrap();
    let bot = tmp.path().join("bot.py");
    std::fs::write(
        &bot,
        "import sys\nfrom helper import first_empty\n\
         for line in sys.stdin:\n    w = line.split()\n\
         \x20   if w and w[0] == 'turn':\n        print(first_empty(w[1]), flush=True)\n",
    )
    .unwrap();
    let helper = tmp.path().join("helper.py");
    std::fs::write(&helper, "def first_empty(p):\n    return p.index('.')\n").unwrap();
    let file = tmp.path().join("t.toml");
    std::fs::write(
        &file,
        format!(
            "game = \"tictactoe\"\ngames_per_pairing = 4\nseed = 2\n\
             [[bots]]\nname = \"student\"\ncommand = \"python3 {}\"\n\
             [[bots]]\nname = \"random\"\nbuiltin = \"random\"\n",
            bot.display()
        ),
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let shard = |i: &str| {
        let out = tmp.path().join(format!("shard{i}"));
        let o = run(&[
            "tournament",
            file,
            "--out",
            out.to_str().unwrap(),
            "--shard",
            &format!("{i}/2"),
            "--no-report",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        out.to_string_lossy().into_owned()
    };
    let one = shard("1");
    // The helper changes between the shards: same script, another program.
    std::fs::write(&helper, "def first_empty(p):\n    return p.rindex('.')\n").unwrap();
    let two = shard("2");
    let o = run(&["merge", &one, &two]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("bot 'student': helper.py changed"), "{err}");
    let o = run(&[
        "tournament",
        file,
        "--out",
        &one,
        "--resume",
        "--shard",
        "1/2",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("bot 'student': helper.py changed"), "{err}");
}

#[test]
fn the_gnu_parallel_recipe_shards_and_merges_to_the_unsharded_standings() {
    if std::process::Command::new("parallel")
        .arg("--version")
        .output()
        .is_err()
    {
        crate::common::skipped("contrib/parallel: GNU parallel is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let o = referee()
        .args([
            "tournament",
            "tournaments/tictactoe.toml",
            "--no-report",
            "--out",
        ])
        .arg(&whole)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = tmp.path().join("par");
    let bin = env!("CARGO_BIN_EXE_referee");
    let o = std::process::Command::new("bash")
        .arg(root().join("contrib/parallel/run.sh"))
        .args([
            "3",
            out.to_str().unwrap(),
            "tournament",
            "tournaments/tictactoe.toml",
        ])
        .env("HOSTS", ":")
        .env("REFEREE", bin)
        .env("MERGE_REFEREE", bin)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(
        crate::common::standings(out.join("merged").to_str().unwrap()),
        crate::common::standings(whole.to_str().unwrap())
    );
}
