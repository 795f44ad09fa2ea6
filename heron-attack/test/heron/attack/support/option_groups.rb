# frozen_string_literal: true

require "optparse"
require "heron/attack"

# For the tests of one group of Heron::Attack::Options: a parser with only that group's options.
module OptionGroups
  # The groups whose options are defined in more than one place of the help.
  DEFINES = { Heron::Attack::Options::Load => %i[define_rate define_amount],
              Heron::Attack::Options::Thresholds => %i[define_knee define_fail_if] }.freeze

  # @param argv [Array<String>] parsed by the group's options alone; what is not an option is left.
  # @param group [Object] e.g. Heron::Attack::Options::Client.new.
  # @return [Object] the group, filled from argv.
  def parse_group(argv, group)
    OptionParser.new { |o| DEFINES.fetch(group.class, [:define]).each { |define| group.public_send(define, o) } }.parse!(argv)
    group
  end
end
