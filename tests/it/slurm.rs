//! The Slurm recipes of contrib/slurm/ on a real Slurm: this test starts
//! `munged`, `slurmctld` and `slurmd` on this machine (one node, its own
//! ports, configuration and state in a temporary folder), submits sharded
//! runs as array jobs with a dependent merge, and checks that the merged
//! results equal an unsharded run's. It stops every daemon it started, by
//! pid, and leaves no file behind, even when it fails.
//!
//! It needs root and Debian's `slurm-wlm` and `munge` (`.ci/run` installs
//! them); elsewhere it says what it skips, and fails instead under CI or
//! `REFEREE_REQUIRE_ALL=1`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{referee, root, standings, stdout};

/// The daemons of a one-node cluster, stopped when dropped.
struct Cluster {
    dir: tempfile::TempDir,
    daemons: Vec<Child>,
    conf: PathBuf,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // slurmd and slurmctld first (their jobs go with them), munged last.
        for d in self.daemons.iter_mut().rev() {
            let pid = nix::unistd::Pid::from_raw(d.id() as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
            let until = Instant::now() + Duration::from_secs(10);
            while Instant::now() < until && matches!(d.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = d.kill();
            let _ = d.wait();
        }
    }
}

/// Whether this machine can run the cluster; says why not otherwise, and
/// fails where everything should be there (CI).
fn available() -> bool {
    let missing: Vec<&str> = [
        "munged",
        "slurmctld",
        "slurmd",
        "sbatch",
        "scontrol",
        "sinfo",
    ]
    .into_iter()
    .filter(|t| {
        !["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"]
            .iter()
            .any(|d| Path::new(d).join(t).exists())
    })
    .collect();
    let why = if !nix::unistd::geteuid().is_root() {
        "the tests do not run as root".to_string()
    } else if !missing.is_empty() {
        format!(
            "{} not installed (apt-get install -y slurm-wlm munge)",
            missing.join(", ")
        )
    } else {
        return true;
    };
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("the Slurm test cannot run in CI: {why}");
    }
    crate::common::skipped(&format!("the Slurm test: {why}"));
    false
}

/// A free TCP port on loopback (free when asked; the daemons bind it next).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

impl Cluster {
    fn start() -> Cluster {
        let dir = tempfile::Builder::new()
            .prefix("referee-slurm")
            .tempdir()
            .unwrap();
        let d = dir.path();
        for sub in ["state", "spool", "log", "run", "etc"] {
            std::fs::create_dir(d.join(sub)).unwrap();
        }
        let key = d.join("etc/munge.key");
        let bytes: Vec<u8> = (0..1024).map(|_| rand::random::<u8>()).collect();
        std::fs::write(&key, bytes).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o400)).unwrap();
        let socket = d.join("run/munge.sock");
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .expect("the host name")
            .trim()
            .split('.')
            .next()
            .unwrap()
            .to_string();
        let p = |s: &str| d.join(s).display().to_string();
        let conf = d.join("etc/slurm.conf");
        std::fs::write(
            &conf,
            format!(
                "ClusterName=referee\nSlurmctldHost={host}(127.0.0.1)\n\
                 SlurmctldPort={}\nSlurmdPort={}\n\
                 AuthType=auth/munge\nAuthInfo=socket={}\nCredType=cred/munge\n\
                 SlurmUser=root\nSlurmdUser=root\n\
                 StateSaveLocation={}\nSlurmdSpoolDir={}\n\
                 SlurmctldPidFile={}\nSlurmdPidFile={}\n\
                 SlurmctldLogFile={}\nSlurmdLogFile={}\n\
                 ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
                 JobAcctGatherType=jobacct_gather/none\n\
                 AccountingStorageType=accounting_storage/none\n\
                 SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
                 ReturnToService=2\nMpiDefault=none\nMinJobAge=600\n\
                 NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n\
                 PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP\n",
                free_port(),
                free_port(),
                socket.display(),
                p("state"),
                p("spool"),
                p("run/slurmctld.pid"),
                p("run/slurmd.pid"),
                p("log/slurmctld.log"),
                p("log/slurmd.log"),
                cpus = std::thread::available_parallelism().map_or(1, |n| n.get()),
            ),
        )
        .unwrap();
        let mut cluster = Cluster {
            dir,
            daemons: Vec::new(),
            conf,
        };
        let d = cluster.dir.path().to_path_buf();
        let spawn = |cluster: &mut Cluster, cmd: &mut Command| {
            let child = cmd
                .env("SLURM_CONF", &cluster.conf)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("a daemon starts");
            cluster.daemons.push(child);
        };
        spawn(
            &mut cluster,
            Command::new("munged")
                .args(["-F", "-f"])
                .arg(format!("--socket={}", socket.display()))
                .arg(format!("--key-file={}", key.display()))
                .arg(format!("--log-file={}", d.join("log/munged.log").display()))
                .arg(format!("--pid-file={}", d.join("run/munged.pid").display()))
                .arg(format!(
                    "--seed-file={}",
                    d.join("state/munge.seed").display()
                )),
        );
        cluster.wait_for(|| socket.exists(), "munged's socket");
        spawn(&mut cluster, Command::new("slurmctld").args(["-D", "-i"]));
        spawn(
            &mut cluster,
            Command::new("slurmd").args(["-D", "-N", &host]),
        );
        cluster.wait_for(
            || {
                let o = cluster.cmd("sinfo").args(["-h", "-o", "%t"]).output();
                o.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
            },
            "the node to be idle",
        );
        cluster
    }

    /// A Slurm client command talking to this cluster.
    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf)
            .env("REFEREE", env!("CARGO_BIN_EXE_referee"))
            .current_dir(root());
        c
    }

    fn wait_for(&self, mut ready: impl FnMut() -> bool, what: &str) {
        let until = Instant::now() + Duration::from_secs(60);
        while !ready() {
            if Instant::now() > until {
                let log =
                    |f: &str| std::fs::read_to_string(self.dir.path().join(f)).unwrap_or_default();
                panic!(
                    "timed out waiting for {what}\nslurmctld: {}\nslurmd: {}",
                    log("log/slurmctld.log"),
                    log("log/slurmd.log")
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The state of job `id` (`COMPLETED`, `CANCELLED`, `FAILED`, ...).
    fn job_state(&self, id: &str) -> String {
        let o = self
            .cmd("scontrol")
            .args(["show", "job", id])
            .output()
            .unwrap();
        let text = stdout(&o);
        text.split_whitespace()
            .find_map(|w| w.strip_prefix("JobState="))
            .unwrap_or("")
            .to_string()
    }
}

/// The contrib script `name`.
fn script(name: &str) -> PathBuf {
    root().join("contrib/slurm").join(name)
}

/// Runs submit.sh with SUBMIT_WAIT=1; returns (array job id, merge job id,
/// whether the merge succeeded).
fn submit_and_wait(c: &Cluster, args: &[&str]) -> (String, String, bool) {
    let o = c
        .cmd("bash")
        .arg(script("submit.sh"))
        .args(args)
        .env("SUBMIT_WAIT", "1")
        .output()
        .unwrap();
    let text = stdout(&o);
    let array = text.lines().next().unwrap_or("").trim().to_string();
    let merge = text
        .lines()
        .find_map(|l| l.strip_prefix("merge job ").filter(|r| !r.contains(':')))
        .unwrap_or("")
        .trim()
        .to_string();
    assert!(
        !array.is_empty() && !merge.is_empty(),
        "submit.sh said: {text}{}",
        crate::common::stderr(&o)
    );
    (array, merge, o.status.success())
}

/// A referee wrapper that makes shard `task` fail once, leaving half of its
/// games file behind with a torn last line (as a node killed mid-run
/// would), and then play.
fn flaky_referee(dir: &Path, task: u32) -> PathBuf {
    let path = dir.join("flaky-referee");
    let flag = dir.join("failed-once");
    std::fs::write(
        &path,
        format!(
            "#!/bin/bash\nif [ \"$SLURM_ARRAY_TASK_ID\" = {task} ] && [ ! -e {flag} ]; then\n\
             touch {flag}\n  {real} \"$@\"\n  args=(\"$@\")\n\
             for i in \"${{!args[@]}}\"; do [ \"${{args[$i]}}\" = --out ] && out=${{args[$((i+1))]}}; done\n\
             f=$out/games.jsonl\n  truncate -s $(( $(stat -c %s \"$f\") / 2 )) \"$f\"\n  exit 1\nfi\n\
             exec {real} \"$@\"\n",
            flag = flag.display(),
            real = env!("CARGO_BIN_EXE_referee"),
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn sharded_runs_on_a_real_slurm_merge_to_the_unsharded_results() {
    if !available() {
        return;
    }
    let cluster = Cluster::start();
    let work = cluster.dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let file = "tournaments/tictactoe.toml";

    // The reference: the same tournament, unsharded.
    let whole = work.join("whole");
    let o = referee()
        .args(["tournament", file, "--json", "--no-report", "--out"])
        .arg(&whole)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", crate::common::stderr(&o));
    let expected = standings(whole.to_str().unwrap());

    // Four shards as an array job, the merge after them.
    let out = work.join("t4");
    let (array, merge, ok) =
        submit_and_wait(&cluster, &["4", out.to_str().unwrap(), "tournament", file]);
    assert!(
        ok,
        "the merge job failed: {}",
        std::fs::read_to_string(out.join("logs/merge.out")).unwrap_or_default()
    );
    assert_eq!(cluster.job_state(&merge), "COMPLETED");
    for k in 1..=4 {
        assert!(
            out.join(format!("shard-{k}/games.jsonl")).exists(),
            "shard {k} of job {array}"
        );
    }
    assert_eq!(standings(out.join("merged").to_str().unwrap()), expected);

    // A shard that fails cancels the merge; submitted again alone, it
    // resumes its half-written folder, and the merge then completes.
    let out = work.join("t4-fail");
    let flaky = flaky_referee(&work, 2);
    let o = cluster
        .cmd("bash")
        .arg(script("submit.sh"))
        .args(["4", out.to_str().unwrap(), "tournament", file])
        .env("SUBMIT_WAIT", "1")
        .env("REFEREE", &flaky)
        .output()
        .unwrap();
    let log = |f: &str| std::fs::read_to_string(out.join("logs").join(f)).unwrap_or_default();
    assert!(
        !o.status.success(),
        "the merge ran although shard 2 failed: {}\nshard 2: {}\nmerge: {}\nflag: {}",
        stdout(&o),
        log("shard-2.out"),
        log("merge.out"),
        work.join("failed-once").exists()
    );
    let merge = stdout(&o)
        .lines()
        .find_map(|l| {
            l.strip_prefix("merge job ")
                .filter(|r| !r.contains(':'))
                .map(|s| s.trim().to_string())
        })
        .expect("the merge job's id");
    assert_eq!(cluster.job_state(&merge), "CANCELLED");
    assert!(!out.join("merged").exists());
    let half = crate::common::lines(out.join("shard-2").to_str().unwrap());
    assert!(
        half < 150,
        "shard 2 holds {half} lines: it should be half-written"
    );
    let again = cluster
        .cmd("sbatch")
        .args(["--wait", "--array=2", "--output"])
        .arg(out.join("logs/shard-2-again.out"))
        .arg(script("shard.sbatch"))
        .args(["4", out.to_str().unwrap(), "tournament", file])
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "{}",
        std::fs::read_to_string(out.join("logs/shard-2-again.out")).unwrap_or_default()
    );
    let merged = cluster
        .cmd("sbatch")
        .args(["--wait", "--output"])
        .arg(out.join("logs/merge-again.out"))
        .arg(script("merge.sbatch"))
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        merged.status.success(),
        "{}",
        std::fs::read_to_string(out.join("logs/merge-again.out")).unwrap_or_default()
    );
    assert_eq!(standings(out.join("merged").to_str().unwrap()), expected);

    // A class graded in 3 shards and merged: the unsharded gradebook.
    let class = work.join("class");
    let good = "import sys\nfor line in sys.stdin:\n    w = line.split()\n    \
        if w and w[0] == 'turn':\n        b = w[1]\n        \
        print(next(i for i in [4,0,2,6,8,1,3,5,7] if b[i] == '.'), flush=True)\n";
    for (name, text) in [
        ("ann", good),
        ("ben", "import sys\nsys.exit(3)\n"),
        ("cat", good),
        ("dan", "print('4')\n"),
        ("eve", good),
    ] {
        std::fs::create_dir_all(class.join(name)).unwrap();
        std::fs::write(class.join(name).join("bot.py"), text).unwrap();
    }
    let class_s = class.to_str().unwrap();
    let grade = ["grade-all", "tictactoe", "--games", "4", class_s];
    let whole = work.join("grades-whole");
    let o = referee()
        .args(grade)
        .arg("--out")
        .arg(&whole)
        .output()
        .unwrap();
    assert!(o.status.code().is_some(), "{}", crate::common::stderr(&o));
    let out = work.join("g3");
    let mut args = vec!["3", out.to_str().unwrap()];
    args.extend(grade);
    let (_, merge, ok) = submit_and_wait(&cluster, &args);
    assert!(
        ok,
        "the class merge failed: {}",
        std::fs::read_to_string(out.join("logs/merge.out")).unwrap_or_default()
    );
    assert_eq!(cluster.job_state(&merge), "COMPLETED");
    for f in ["gradebook.json", "gradebook.csv", "grades.csv"] {
        assert_eq!(
            std::fs::read_to_string(out.join("merged").join(f)).unwrap(),
            std::fs::read_to_string(whole.join(f)).unwrap(),
            "{f}"
        );
    }
}
