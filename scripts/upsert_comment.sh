#!/usr/bin/env bash
# One pull-request comment per marker, kept up to date: the first comment whose body starts with MARKER is
# edited in place, else a new one is posted. Used by action.yml for the spec diff and the compare comments.
# Usage: upsert_comment.sh OWNER/REPO PR_NUMBER MARKER BODY_FILE   (needs gh, authenticated by GH_TOKEN, and jq)
set -euo pipefail
repo="$1"; pr="$2"; marker="$3"; file="$4"
id=$(gh api "repos/$repo/issues/$pr/comments" --paginate \
       --jq ".[] | select(.body | startswith(\"$marker\")) | .id" | head -n1)
body=$(jq -Rs '{body: .}' < "$file")
if [ -n "$id" ]; then
  echo "$body" | gh api -X PATCH "repos/$repo/issues/comments/$id" --input -
else
  echo "$body" | gh api -X POST "repos/$repo/issues/$pr/comments" --input -
fi
