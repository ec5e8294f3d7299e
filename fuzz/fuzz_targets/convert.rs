//! Any bytes to `/convert`: never a panic, always a well-formed review.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (reply, _) = kudo_webhook::convert_review(data, &kudo_crd::convert::NoTypes);
    assert!(reply.http_status == 200 || reply.http_status == 400);
    let _: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
});
