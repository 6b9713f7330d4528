//! The data directory's permissions, as PostgreSQL keeps them: the directory is 0700 (or 0750
//! for group read access), every file the server creates is 0600 (0640), and the server refuses
//! to start on a directory others may read.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::Path;

/// Group and other bits that must be clear: PostgreSQL allows u=rwx or u=rwx,g=rx.
const FORBIDDEN: u32 = 0o027;

/// Sets the process umask. Process-wide, so called before any thread starts.
fn set_umask(mask: libc::mode_t) {
    // SAFETY: umask(2) only swaps the process's file-creation mask; it cannot fail.
    unsafe {
        libc::umask(mask);
    }
}

/// Creates the data directory if missing (mode 0700; its parents as the caller's umask makes
/// them), checks its permissions, and sets the umask so that every file and directory created
/// later is private: 077, or 027 when the directory grants group read access (0750), as
/// PostgreSQL does. A directory keel has not initialised yet (no `keel.control`) is given
/// 0700 first, as initdb fixes the permissions of an existing directory.
pub fn prepare(data_dir: &Path) -> Result<(), String> {
    let shown = data_dir.display();
    if !data_dir.exists() {
        if let Some(parent) = data_dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("could not create directory \"{}\": {e}", parent.display()))?;
        }
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(data_dir)
            .map_err(|e| format!("could not create data directory \"{shown}\": {e}"))?;
    }
    // The mode given to DirBuilder is masked by the caller's umask; the umask set below
    // covers everything created from here on.
    set_umask(0o077);
    let meta = std::fs::metadata(data_dir)
        .map_err(|e| format!("could not read permissions of directory \"{shown}\": {e}"))?;
    if !meta.is_dir() {
        return Err(format!("\"{shown}\" is not a directory"));
    }
    let mut mode = meta.permissions().mode() & 0o777;
    if mode & FORBIDDEN != 0 && !data_dir.join("keel.control").exists() {
        std::fs::set_permissions(data_dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("could not change permissions of directory \"{shown}\": {e}"))?;
        mode = 0o700;
    }
    if mode & FORBIDDEN != 0 {
        return Err(format!(
            "data directory \"{shown}\" has invalid permissions\nDETAIL:  Permissions should be u=rwx (0700) or u=rwx,g=rx (0750)."
        ));
    }
    if mode & 0o050 != 0 {
        set_umask(0o027);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn new_dirs_are_private_and_loose_initialised_ones_are_refused() {
        let root = std::env::temp_dir().join(format!("keel-datadir-test-{}", std::process::id()));
        let dir = root.join("a").join("data");
        prepare(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        std::fs::write(dir.join("f"), b"x").unwrap();
        assert_eq!(mode(&dir.join("f")), 0o600);

        // Initialised and opened up: refused with PostgreSQL's message.
        std::fs::write(dir.join("keel.control"), b"x").unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = prepare(&dir).unwrap_err();
        assert!(e.contains("has invalid permissions"), "{e}");
        // Group read access is allowed.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o750)).unwrap();
        prepare(&dir).unwrap();

        // Not initialised yet: fixed, as initdb does.
        let fresh = root.join("fresh");
        std::fs::create_dir_all(&fresh).unwrap();
        std::fs::set_permissions(&fresh, std::fs::Permissions::from_mode(0o755)).unwrap();
        prepare(&fresh).unwrap();
        assert_eq!(mode(&fresh), 0o700);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
