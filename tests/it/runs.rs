//! Run folders that survive what the machine does to them: a disk that
//! fills in the middle of a run, files without an end.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{lines, resume_equals_full, run, stderr};

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
            eprintln!("skipped: mounting a small tmpfs needs root");
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
                eprintln!(
                    "skipped: cannot mount a tmpfs here: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("skipped: cannot run mount: {e}");
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
