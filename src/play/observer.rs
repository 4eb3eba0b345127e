//! The observer: library runs tell an [`Observer`] how far they are and
//! what is worth telling, and never print. The command line draws it (its
//! `Progress`: a bar on a terminal, a plain line every few seconds
//! otherwise, nothing when silenced); [`Silent`] shows nothing, and a
//! [`Log`] carries notes from the threads of a server or a client session.

/// What a long library run tells as it goes. Every method has a default
/// that does nothing, so an observer implements only what it shows.
pub trait Observer: Sync {
    /// A phase of `total` steps (`None`: unknown) begins, named `label`
    /// (`games`, `positions`, `students`), of which `done` are done already.
    fn begin(&self, _label: &str, _total: Option<u64>, _done: u64) {}
    /// `n` more steps are done.
    fn advance(&self, _n: u64) {}
    /// A short running summary to show beside the count (a running score).
    fn status(&self, _text: &str) {}
    /// A line worth telling the user now (`graded alice: pass`).
    fn note(&self, _text: &str) {}
    /// Time has passed within a step (a game of a student being graded):
    /// a chance to show progress that is due, for steps that take long.
    fn tick(&self) {}
    /// The phase ended.
    fn end(&self) {}
}

/// A shareable log for the parts of a run that live on their own threads
/// (a server, a client session): its notes go to an observer, or nowhere.
#[derive(Clone, Default)]
pub struct Log(Option<std::sync::Arc<dyn Observer + Send + Sync>>);

impl Log {
    /// A log whose notes go to `observer`.
    pub fn to(observer: std::sync::Arc<dyn Observer + Send + Sync>) -> Log {
        Log(Some(observer))
    }

    /// Tells `text`, if anyone listens.
    pub(crate) fn note(&self, text: &str) {
        if let Some(o) = &self.0 {
            o.note(text);
        }
    }
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Log(on)"
        } else {
            "Log(off)"
        })
    }
}

/// The observer that shows nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Observer for Silent {}
