/** The machine controller's condition reasons (machine-api-operator's, MAPO's). */
export const MachineReasons = {
  InstanceMissing: 'InstanceMissing',
  InstanceNotCreated: 'InstanceNotCreated',
} as const;
