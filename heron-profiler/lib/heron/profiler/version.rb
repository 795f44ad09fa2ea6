# frozen_string_literal: true

module Heron
  module Profiler
    VERSION = "0.1.0"
  end
end
