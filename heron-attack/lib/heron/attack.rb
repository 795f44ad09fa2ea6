# frozen_string_literal: true

require_relative "attack/version"
require_relative "attack/io_timeout"
require_relative "attack/cli"

module Heron
  # `heron attack`: an open-loop HTTP load generator. Requests go out on a fixed schedule
  # (request i at start + i / rate) whatever the server does, and latency is measured both from
  # that due time (corrected for coordinated omission) and from the actual send. See
  # docs/attack.md; the entry point is {Attack::CLI}.
  module Attack
  end
end
