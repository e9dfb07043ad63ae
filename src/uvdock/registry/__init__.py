"""The OCI registry: the distribution client and its auth (the only network code), the API
as data (oci), NGC tag parsing (tags), and the GitLab registry host of a remote (gitlab_host)."""
