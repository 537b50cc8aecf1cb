//! The HTTP/1.1 codec both sides share: our server (requests in, responses out) and our client
//! for pods (requests out, responses in) read lengths, write chunks and digits the same way.
//! What only one side needs stays with it: `server/http1` parses request heads and writes
//! response heads, `upstream/h1` writes request heads and parses response heads and bodies.

mod chunk;
mod digits;
mod length;

pub use self::{
    chunk::{encode_chunk, encode_last_chunk},
    digits::digits,
    length::parse_length,
};
