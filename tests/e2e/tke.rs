//! TKE shadow mode (qcloud profile): CLB answers reproduced, or hosts refused with reasons.
