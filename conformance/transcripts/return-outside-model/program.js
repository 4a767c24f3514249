return {rows: [1, {when: new Date(0)}]}
