//! The scenarios that have the cluster to themselves (`Scenario::start_alone`): they stop what
//! every scenario shares (the daemons, the API server), replace kudo's CRDs, or measure the
//! daemons' own resources. In one module so that their names sort first: the test harness
//! starts tests in name order, so they run one after the other at the start, and the cluster
//! is drained of other scenarios for them once rather than once each.

mod bounded;
mod failover;
mod migration;
mod restart;
mod shards;
mod webhook_memory;
