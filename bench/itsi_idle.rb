# frozen_string_literal: true

# Itsi configuration for bench/run.rb's idle row (`itsi serve -C bench/itsi_idle.rb`), like
# Heron's raised limits there: Itsi closes a keep-alive connection whose next request head has
# not come within header_read_timeout (2 s by default) and answers 503 past
# ruby_thread_request_backlog_size queued requests (30 per thread by default), so with its
# defaults it neither keeps idle connections nor takes a batch of 500 at once.
header_read_timeout 120.0
ruby_thread_request_backlog_size 20_000
