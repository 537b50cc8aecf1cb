//! Requests in shapes the route table did not intend: paths, methods, forwarding headers.
