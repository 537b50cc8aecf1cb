//! Connection lifecycle abuse: silent sockets, preface fragments, idle keep-alives, slow bodies.
