//! The release packages as their users get them. Windows (`make windows`): the zip's files,
//! names, size and version; `pbrain-fivezero.exe` under Wine in a tournament against the Linux
//! engine (no forfeits, memory under the Gomocup limit), `INFO max_memory` against its private
//! bytes, Windows paths (spaces, backslashes, started from another folder), faults (a broken
//! runtime DLL, a missing model, a kill mid-move). Linux (`make dist`): the tarball's files and
//! version, and the engine playing its network from the unpacked folder alone.
//!
//! Ignored in a plain `cargo test`: `scripts/test-packages.sh` (run by `make test`) builds and
//! unpacks the packages, puts the launcher `pbrain-fivezero` (the .exe under wine64) in
//! `FIVEZERO_BIN_DIR`, and runs these with `--include-ignored`, with the protocol tests of
//! `engine_protocol` driving the .exe the same way.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use fivezero_tests::board::BoardServer;
use fivezero_tests::pipe::{Brain, parse_move};
use fivezero_tests::referee::{args, bin, tournament};

const QUICK: Duration = Duration::from_secs(10);
/// Gomocup accepts a program up to 8 MB without asking the organisers (2024 rules).
const GOMOCUP_SIZE_LIMIT: u64 = 8_000_000;
/// Gomocup's memory limit, which the tournament enforces on the .exe (private bytes).
const GOMOCUP_MEMORY: &str = "367001600";

fn env_path(key: &str) -> PathBuf {
    PathBuf::from(
        std::env::var_os(key)
            .unwrap_or_else(|| panic!("{key} unset: run scripts/test-packages.sh (make test)")),
    )
}

/// The package file named by `key`, which must be `fivezero-<version>-<platform_suffix>`: the
/// version in its name is the workspace's, the one the engine reports.
fn package_file(key: &str, platform_suffix: &str) -> PathBuf {
    let path = env_path(key);
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        path.file_name().unwrap().to_str().unwrap(),
        format!("fivezero-{version}-{platform_suffix}")
    );
    path
}

/// The zip's member names and sizes, read by the project's Python (zipfile).
fn zip_members(zip: &Path) -> Vec<(String, u64)> {
    let py = Path::new(env!("CARGO_MANIFEST_DIR")).join("../third_party/py/bin/python");
    let out = Command::new(py)
        .args([
            "-c",
            "import sys, zipfile\nfor i in zipfile.ZipFile(sys.argv[1]).infolist(): print(i.filename, i.file_size)",
        ])
        .arg(zip)
        .output()
        .expect("python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (name, size) = l.rsplit_once(' ').unwrap();
            (name.to_string(), size.parse().unwrap())
        })
        .collect()
}

/// A Wine path (`Z:\dir\file`) for a Linux path: what a Windows user types.
fn windows_path(p: &Path) -> String {
    format!("Z:{}", p.display()).replace('/', "\\")
}

/// The unpacked package copied to `dir` (a folder a test may change), shim included.
fn package_copy(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    for e in std::fs::read_dir(env_path("FIVEZERO_WINDOWS_PACKAGE")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    dir.to_path_buf()
}

/// The .exe in `folder` under Wine, started in `cwd`, without the Linux runtime's path that cargo
/// sets for the tests (`.cargo/config.toml`; Wine would pass it on to the .exe).
fn spawn_exe(folder: &Path, cwd: &Path, args: &[&str]) -> Brain {
    spawn_exe_with(folder, cwd, &[], args)
}

/// As [`spawn_exe`], with `KEY=VALUE` settings in its environment.
fn spawn_exe_with(folder: &Path, cwd: &Path, env: &[&str], args: &[&str]) -> Brain {
    let mut all = vec!["-u".to_string(), "ORT_DYLIB_PATH".to_string()];
    all.extend(env.iter().map(|s| s.to_string()));
    all.extend([
        env_path("FIVEZERO_WINE").display().to_string(),
        folder.join("pbrain-fivezero.exe").display().to_string(),
    ]);
    all.extend(args.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    Brain::spawn_in(Path::new("/usr/bin/env"), &refs, cwd)
}

/// A random tiny network at `path` (a seed per file, so each is a new model).
fn random_model(path: &Path, seed: u64) {
    let bytes = tools::measure::random_model(engine::net::Preset::Tiny, seed, seed);
    std::fs::write(path, bytes).unwrap();
}

fn said(b: &Brain, what: &str) -> bool {
    b.messages.iter().any(|m| m.contains(what))
}

#[test]
#[ignore = "the Windows package under Wine: scripts/test-packages.sh"]
fn windows_zip_holds_the_engine_and_its_readme_under_one_version() {
    let zip = package_file("FIVEZERO_WINDOWS_ZIP", "windows-x64.zip");
    let version = env!("CARGO_PKG_VERSION");
    let zip_size = std::fs::metadata(&zip).unwrap().len();
    let members = zip_members(&zip);
    let names: Vec<&str> = members.iter().map(|(n, _)| n.as_str()).collect();
    eprintln!("{}: {zip_size} bytes; {members:?}", zip.display());
    assert!(names.contains(&"pbrain-fivezero.exe"), "{names:?}");
    assert!(names.contains(&"README.txt"), "{names:?}");
    // Files at the top level (GomocupJudge), and never the test-only Wine shim.
    assert!(names.iter().all(|n| !n.contains('/')), "{names:?}");
    assert!(!names.contains(&"bcryptprimitives.dll"), "{names:?}");
    assert!(
        zip_size <= GOMOCUP_SIZE_LIMIT,
        "the zip is {zip_size} bytes, over Gomocup's {GOMOCUP_SIZE_LIMIT}"
    );

    let pkg = env_path("FIVEZERO_WINDOWS_PACKAGE");
    let exe = std::fs::read(pkg.join("pbrain-fivezero.exe")).unwrap();
    // PE32+ for x86-64: "MZ", the PE header's offset at 0x3c, machine 0x8664.
    assert_eq!(&exe[..2], b"MZ");
    let pe = u32::from_le_bytes(exe[0x3c..0x40].try_into().unwrap()) as usize;
    assert_eq!(&exe[pe..pe + 4], b"PE\0\0");
    assert_eq!(u16::from_le_bytes([exe[pe + 4], exe[pe + 5]]), 0x8664);

    let readme = std::fs::read_to_string(pkg.join("README.txt")).unwrap();
    assert!(readme.contains(&format!("fivezero {version}")), "{readme}");
    // CRLF throughout (Notepad); `lines()` would hide the CR.
    assert!(readme.split_inclusive('\n').all(|l| l.ends_with("\r\n")));
    for manager in ["Piskvork", "Yixin-Board", "GomocupJudge"] {
        assert!(
            readme.contains(manager),
            "README.txt does not mention {manager}"
        );
    }

    let out = Command::new(env_path("FIVEZERO_WINE"))
        .arg(pkg.join("pbrain-fivezero.exe"))
        .arg("--version")
        .env_remove("ORT_DYLIB_PATH")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(version),
        "{out:?}"
    );
    let mut b = Brain::spawn(&bin("pbrain-fivezero"), &[]);
    b.send("ABOUT");
    let about = b.reply(QUICK);
    assert!(about.contains(&format!("version=\"{version}\"")), "{about}");
}

#[test]
#[ignore = "the Windows package under Wine: scripts/test-packages.sh"]
fn windows_exe_plays_the_linux_engine_without_forfeits_within_the_memory_limit() {
    let linux = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/pbrain-fivezero");
    let run = tournament(
        &args(&[
            "--engine",
            &format!("cmd={},name=windows", bin("pbrain-fivezero").display()),
            "--engine",
            &format!("cmd={},name=linux", linux.display()),
            "--games",
            "4",
            "--repeat",
            "--turn-ms",
            "300",
            "--max-memory",
            GOMOCUP_MEMORY,
        ]),
        Duration::from_secs(900),
    );
    eprintln!("{}", run.stdout);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stderr, run.stdout);
    assert_eq!(run.json["games_played"], 4, "{}", run.json);
    for name in ["windows", "linux"] {
        let forfeits = &run.engine(name)["forfeits"];
        assert!(
            forfeits.as_object().is_some_and(|f| f.is_empty()),
            "{name}: forfeits {forfeits}\n{}",
            run.wire
                .lines()
                .rev()
                .take(40)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[test]
#[ignore = "the Windows package under Wine: scripts/test-packages.sh"]
fn windows_paths_with_spaces_and_backslashes_from_any_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = package_copy(&tmp.path().join("Gomocup engines").join("five zero"));
    let models = tmp.path().join("my models");
    std::fs::create_dir_all(&models).unwrap();
    let model = models.join("net 1.onnx");
    random_model(&model, 1);
    // Started from another folder, as managers do: the engine finds what it needs by its own path.
    let elsewhere = tmp.path().join("manager folder");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let mut b = spawn_exe(&folder, &elsewhere, &["--model", &windows_path(&model)]);
    b.send("START 15");
    assert_eq!(b.reply(QUICK), "OK");
    b.send("INFO timeout_turn 300");
    b.send("BEGIN");
    let r = b.reply(QUICK);
    assert!(parse_move(&r).is_some(), "{r}: {:?}", b.messages);
    assert!(said(&b, "net 1.onnx loaded"), "{:?}", b.messages);
    // A model folder given with a trailing backslash, switched to during the game, is watched: a
    // newer model written into it swaps in between moves.
    b.send(&format!("INFO model {}\\", windows_path(&models)));
    b.send("TURN 8,8");
    let r = b.reply(QUICK);
    assert!(parse_move(&r).is_some(), "{r}: {:?}", b.messages);
    random_model(&models.join("net 2.onnx"), 2);
    let deadline = std::time::Instant::now() + QUICK;
    let mut turn = 0;
    while !said(&b, "net 2.onnx loaded") && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(600));
        b.send(&format!("TURN {turn},0"));
        turn += 1;
        assert!(parse_move(&b.reply(QUICK)).is_some(), "{:?}", b.messages);
    }
    assert!(said(&b, "net 2.onnx loaded"), "{:?}", b.messages);
    b.send("END");
    assert!(b.exits_within(QUICK));
}

/// The embedded networks played on ONNX Runtime (`FIVEZERO_INFERENCE=onnx`) from a package
/// folder: the first `MESSAGE` names the evaluator that took them.
fn played_on_onnx_runtime(folder: &Path, cwd: &Path) -> (Brain, (u32, u32)) {
    let mut b = spawn_exe_with(folder, cwd, &["FIVEZERO_INFERENCE=onnx"], &[]);
    b.send("START 15");
    assert_eq!(b.reply(QUICK), "OK");
    b.send("INFO timeout_turn 300");
    b.send("TURN 7,7");
    let r = b.reply(QUICK);
    let reply = parse_move(&r).unwrap_or_else(|| panic!("{r}: {:?}", b.messages));
    (b, reply)
}

/// The engine's own networks need no DLL; the add-on zip of ONNX Runtime's DLLs, unpacked next
/// to the .exe, runs ONNX models on ONNX Runtime, found whatever the working directory.
#[test]
#[ignore = "the Windows package under Wine: scripts/test-packages.sh"]
fn windows_onnxruntime_addon_runs_models_on_onnx_runtime() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = package_copy(&tmp.path().join("pkg"));
    let (b, _) = played_on_onnx_runtime(&folder, tmp.path());
    assert!(said(&b, "onnxruntime.dll"), "{:?}", b.messages);
    assert!(
        said(&b, "keeping the fallback classical"),
        "{:?}",
        b.messages
    );

    let addon = env_path("FIVEZERO_WINDOWS_ONNXRUNTIME_ZIP");
    let names: Vec<String> = zip_members(&addon).into_iter().map(|(n, _)| n).collect();
    for dll in [
        "onnxruntime.dll",
        "msvcp140.dll",
        "vcruntime140.dll",
        "vcruntime140_1.dll",
    ] {
        assert!(names.iter().any(|n| n == dll), "{dll} not in {names:?}");
    }
    let py = Path::new(env!("CARGO_MANIFEST_DIR")).join("../third_party/py/bin/python");
    let status = Command::new(py)
        .args([
            "-c",
            "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])",
        ])
        .arg(&addon)
        .arg(&folder)
        .status()
        .unwrap();
    assert!(status.success());
    let (b, _) = played_on_onnx_runtime(&folder, tmp.path());
    assert!(said(&b, "onnx:cpu32"), "{:?}", b.messages);
    assert!(!said(&b, "fallback classical"), "{:?}", b.messages);
}

#[test]
#[ignore = "the Windows package under Wine: scripts/test-packages.sh"]
fn windows_broken_runtime_dll_or_missing_model_is_a_message_and_play_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = package_copy(&tmp.path().join("pkg"));
    // A DLL of the wrong kind where ONNX Runtime is looked for: never a crash dialog or a hang.
    std::fs::write(folder.join("onnxruntime.dll"), b"MZ not really a DLL").unwrap();
    let (mut b, reply) = played_on_onnx_runtime(&folder, tmp.path());
    assert!(said(&b, "could not be loaded"), "{:?}", b.messages);
    let missing = windows_path(&tmp.path().join("no such folder").join("net.onnx"));
    b.send(&format!("INFO model {missing}"));
    // A free point: the classical search's reply to 7,7 is sometimes 8,8.
    let (x, y) = if reply == (8, 8) { (6, 6) } else { (8, 8) };
    b.send(&format!("TURN {x},{y}"));
    assert!(parse_move(&b.reply(QUICK)).is_some(), "{:?}", b.messages);
    assert!(said(&b, "no model at"), "{:?}", b.messages);
    b.send("END");
    assert!(b.exits_within(QUICK));
}

#[test]
#[ignore = "the Windows package under Wine: scripts/test-packages.sh"]
fn windows_killed_mid_move_it_leaves_no_file_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = package_copy(&tmp.path().join("pkg"));
    let listing = |d: &Path| {
        let mut v: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };
    let before = (listing(&folder), listing(tmp.path()));
    let mut b = spawn_exe(&folder, tmp.path(), &[]);
    b.send("START 15");
    assert_eq!(b.reply(QUICK), "OK");
    b.send("INFO timeout_turn 20000");
    b.send("TURN 7,7");
    std::thread::sleep(Duration::from_millis(1500));
    b.kill();
    assert_eq!((listing(&folder), listing(tmp.path())), before);
}

/// `INFO max_memory` holds for the private bytes the referee measures, Wine's own included: a
/// search on the classical evaluator (fast enough to fill its tree share, the 8 MiB floor, in
/// seconds) under a 48 MB limit, sampled every 100 ms.
#[test]
#[ignore = "the Windows package under Wine: scripts/test-packages.sh"]
fn windows_info_max_memory_bounds_the_private_bytes() {
    const LIMIT: u64 = 48_000_000;
    let mut b = Brain::spawn(&bin("pbrain-fivezero"), &["--model", "none"]);
    b.send("START 15");
    assert_eq!(b.reply(QUICK), "OK");
    b.send(&format!("INFO max_memory {LIMIT}"));
    b.send("INFO timeout_turn 8000");
    b.send("TURN 7,7");
    let mut peak = 0;
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_millis(7500) {
        peak = peak.max(tools::tournament::memory::tree_private_bytes(b.pid()).unwrap_or(0));
        std::thread::sleep(Duration::from_millis(100));
    }
    let r = b.reply(QUICK);
    assert!(parse_move(&r).is_some(), "{r}");
    let search = b.messages.last().cloned().unwrap_or_default();
    eprintln!("peak private bytes {peak} under INFO max_memory {LIMIT}; {search}");
    assert!(peak > 0, "no memory reading");
    assert!(
        peak < LIMIT,
        "{peak} private bytes over INFO max_memory {LIMIT}"
    );
}

#[test]
#[ignore = "the Linux package: scripts/test-packages.sh"]
fn linux_tarball_plays_its_network_from_its_own_folder() {
    package_file("FIVEZERO_LINUX_TARBALL", "linux-x64.tar.gz");
    let version = env!("CARGO_PKG_VERSION");
    let pkg = env_path("FIVEZERO_LINUX_PACKAGE");
    let mut names: Vec<String> = std::fs::read_dir(&pkg)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "README.txt",
            "fivezero-board",
            "libonnxruntime.so",
            "pbrain-fivezero"
        ]
    );
    let readme = std::fs::read_to_string(pkg.join("README.txt")).unwrap();
    assert!(readme.contains(&format!("fivezero {version}")), "{readme}");

    // From another folder, with no setting pointing at the runtime: the folder is all it needs.
    let elsewhere = tempfile::tempdir().unwrap();
    let exe = pkg.join("pbrain-fivezero");
    let out = Command::new(&exe).arg("--version").output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(version),
        "{out:?}"
    );
    // The board from the package serves its page and plays on the embedded networks.
    let board = BoardServer::start_exe(&pkg.join("fivezero-board"), &[]);
    let mut page = board.connect();
    let hello = page.wait_for("hello", QUICK, |_| true);
    assert_eq!(hello["version"], version);
    let state = page.wait_for("state", QUICK, |_| true);
    assert!(
        state["model"].as_str().unwrap().contains("native"),
        "{state}"
    );
    drop(board);

    let mut b = Brain::spawn_in(
        Path::new("/usr/bin/env"),
        &[
            "-u",
            "ORT_DYLIB_PATH",
            "-u",
            "LD_LIBRARY_PATH",
            exe.to_str().unwrap(),
        ],
        elsewhere.path(),
    );
    b.send("START 15");
    assert_eq!(b.reply(QUICK), "OK");
    b.send("ABOUT");
    assert!(b.reply(QUICK).contains(&format!("version=\"{version}\"")));
    b.send("INFO timeout_turn 300");
    b.send("TURN 7,7");
    assert!(parse_move(&b.reply(QUICK)).is_some(), "{:?}", b.messages);
    assert!(said(&b, "embedded defaults"), "{:?}", b.messages);
    assert!(
        !said(&b, "keeping the fallback classical"),
        "{:?}",
        b.messages
    );
    b.send("END");
    assert!(b.exits_within(QUICK));

    // The engine's own networks need no library; the tarball's libonnxruntime.so, found next to
    // the executable, is what runs other ONNX models: played here on it (FIVEZERO_INFERENCE=onnx).
    let mut b = Brain::spawn_in(
        Path::new("/usr/bin/env"),
        &[
            "-u",
            "ORT_DYLIB_PATH",
            "-u",
            "LD_LIBRARY_PATH",
            "FIVEZERO_INFERENCE=onnx",
            exe.to_str().unwrap(),
        ],
        elsewhere.path(),
    );
    b.send("START 15");
    assert_eq!(b.reply(QUICK), "OK");
    b.send("INFO timeout_turn 300");
    b.send("TURN 7,7");
    assert!(parse_move(&b.reply(QUICK)).is_some(), "{:?}", b.messages);
    assert!(said(&b, "onnx:cpu32"), "{:?}", b.messages);
    b.send("END");
    assert!(b.exits_within(QUICK));
}
